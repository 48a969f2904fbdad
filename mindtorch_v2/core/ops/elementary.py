"""placeholder: elementary family (being written)"""
__all__ = []
