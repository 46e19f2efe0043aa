"""kernel/providers"""

__all__: list[str] = []
