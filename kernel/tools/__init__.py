"""kernel/tools"""

__all__: list[str] = []
