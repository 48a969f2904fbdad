"""torch.special (being written)"""
