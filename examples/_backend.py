"""Pick the backend for the examples: mindtorch_v2 by default, real PyTorch with
MINDTORCH_EXAMPLES_BACKEND=torch. The example bodies are the same for both."""
import os


def load():
    if os.environ.get("MINDTORCH_EXAMPLES_BACKEND") == "torch":
        import torch
    else:
        import mindtorch_v2 as torch
    return torch
