"""A small CNN that tells horizontal from vertical bars in 12x12 images made in code
(runs on mindtorch_v2 or PyTorch).

    python examples/small_cnn.py [--epochs N]
"""
import argparse

from _backend import load

torch = load()
nn = torch.nn
F = torch.nn.functional


def bars(n, generator):
    """Images with one bright bar, horizontal (class 0) or vertical (class 1), plus noise."""
    labels = torch.randint(0, 2, (n,), generator=generator)
    pos = torch.randint(2, 10, (n,), generator=generator)
    images = 0.3 * torch.randn(n, 1, 12, 12, generator=generator)
    for i in range(n):
        if labels[i].item() == 0:
            images[i, 0, pos[i].item(), 2:10] += 1.0
        else:
            images[i, 0, 2:10, pos[i].item()] += 1.0
    return images, labels


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(8)
        self.conv2 = nn.Conv2d(8, 16, 3, padding=1)
        self.pool = nn.MaxPool2d(2)
        self.head = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(16, 2))

    def forward(self, x):
        x = self.pool(F.relu(self.bn1(self.conv1(x))))
        x = self.pool(F.relu(self.conv2(x)))
        return self.head(x)


def main(epochs=4, log=print):
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(1)
    x, y = bars(256, g)
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x, y), batch_size=32, shuffle=True,
                                         generator=g)
    model = Net()
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    for epoch in range(epochs):
        total = 0.0
        for xb, yb in loader:
            loss = F.cross_entropy(model(xb), yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss.item() * len(xb)
        log(f"epoch {epoch + 1}  loss {total / len(x):.4f}")
    model.eval()
    xt, yt = bars(128, torch.Generator().manual_seed(2))
    with torch.no_grad():
        acc = (model(xt).argmax(1) == yt).float().mean().item()
    log(f"test accuracy {acc:.3f}")
    return acc


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--epochs", type=int, default=4)
    main(p.parse_args().epochs)
