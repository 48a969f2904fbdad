"""An MLP classifier on two interleaved spirals made in code (runs on mindtorch_v2 or PyTorch).

    python examples/mlp_classifier.py [--epochs N]
"""
import argparse
import math

from _backend import load

torch = load()
nn = torch.nn
F = torch.nn.functional


def spirals(n_per_class, generator):
    t = torch.sqrt(torch.rand(n_per_class, generator=generator)) * 3 * math.pi
    arm = torch.stack([t * torch.cos(t), t * torch.sin(t)], 1) / (3 * math.pi)
    x = torch.cat([arm, -arm]) + 0.03 * torch.randn(2 * n_per_class, 2, generator=generator)
    y = torch.cat([torch.zeros(n_per_class, dtype=torch.long), torch.ones(n_per_class, dtype=torch.long)])
    return x, y


def main(epochs=40, log=print):
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(0)
    x, y = spirals(300, g)
    data = torch.utils.data.TensorDataset(x, y)
    train, test = torch.utils.data.random_split(data, [480, 120], generator=g)
    loader = torch.utils.data.DataLoader(train, batch_size=32, shuffle=True, generator=g)
    model = nn.Sequential(nn.Linear(2, 64), nn.Tanh(), nn.Linear(64, 64), nn.Tanh(), nn.Linear(64, 2))
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=15, gamma=0.5)
    for epoch in range(epochs):
        model.train()
        total = 0.0
        for xb, yb in loader:
            loss = F.cross_entropy(model(xb), yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss.item() * len(xb)
        sched.step()
        if epoch % 10 == 9:
            log(f"epoch {epoch + 1:3d}  loss {total / len(train):.4f}")
    model.eval()
    with torch.no_grad():
        xt = torch.stack([test[i][0] for i in range(len(test))])
        yt = torch.stack([test[i][1] for i in range(len(test))])
        acc = (model(xt).argmax(1) == yt).float().mean().item()
    log(f"test accuracy {acc:.3f}")
    return acc


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--epochs", type=int, default=40)
    main(p.parse_args().epochs)
