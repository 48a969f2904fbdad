"""placeholder: shape_ops (being written)"""
__all__ = []
