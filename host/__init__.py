"""host"""

__all__: list[str] = []
