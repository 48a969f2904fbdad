"""torch.linalg (being written)"""
