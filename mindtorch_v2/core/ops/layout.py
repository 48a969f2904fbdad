"""placeholder: layout family (being written)"""
__all__ = []
