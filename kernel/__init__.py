"""kernel"""

__all__: list[str] = []
