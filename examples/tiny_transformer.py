"""A tiny transformer encoder that learns to find the maximum token of a sequence
(runs on mindtorch_v2 or PyTorch).

    python examples/tiny_transformer.py [--steps N]
"""
import argparse

from _backend import load

torch = load()
nn = torch.nn
F = torch.nn.functional

VOCAB, LENGTH, DIM = 10, 6, 32


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, DIM)
        self.pos = nn.Parameter(torch.zeros(1, LENGTH, DIM))
        layer = nn.TransformerEncoderLayer(DIM, nhead=4, dim_feedforward=64, dropout=0.0, batch_first=True)
        self.layers = nn.ModuleList([layer])
        self.out = nn.Linear(DIM, VOCAB)

    def forward(self, tokens):
        h = self.embed(tokens) + self.pos
        for layer in self.layers:
            h = layer(h)
        return self.out(h.mean(1))


def main(steps=150, log=print):
    torch.manual_seed(0)
    model = Encoder()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
    g = torch.Generator().manual_seed(0)
    for step in range(steps):
        tokens = torch.randint(0, VOCAB, (64, LENGTH), generator=g)
        target = tokens.max(1).values
        loss = F.cross_entropy(model(tokens), target)
        opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 50 == 49:
            log(f"step {step + 1}  loss {loss.item():.4f}")
    tokens = torch.randint(0, VOCAB, (256, LENGTH), generator=g)
    with torch.no_grad():
        acc = (model(tokens).argmax(1) == tokens.max(1).values).float().mean().item()
    log(f"accuracy on fresh sequences {acc:.3f}")
    return acc


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=150)
    main(p.parse_args().steps)
