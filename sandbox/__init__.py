"""sandbox"""

__all__: list[str] = []
