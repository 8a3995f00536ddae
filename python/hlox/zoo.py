"""The model zoo: small and realistic sizes of the models hlox ships examples for. Each entry is a
function returning (module, example input shapes, train flag); `hlox.export --model
hlox.zoo:NAME` exports one."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class MLP(nn.Module):
    """3x Linear+ReLU regression MLP; its train step is the classic hlox benchmark."""

    def __init__(self, width=1024, depth=3, inputs=1024, outputs=1024):
        super().__init__()
        layers, d = [], inputs
        for _ in range(depth):
            layers += [nn.Linear(d, width), nn.ReLU()]
            d = width
        layers.append(nn.Linear(d, outputs))
        self.net = nn.Sequential(*layers)

    def forward(self, x):
        return self.net(x)


class BasicBlock(nn.Module):
    """ResNet basic block: conv3x3-BN-ReLU-conv3x3-BN + identity, ReLU."""

    def __init__(self, channels=64):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(channels)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(channels)

    def forward(self, x):
        y = F.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        return F.relu(y + x)


class GPT2Block(nn.Module):
    """GPT-2 style decoder block: pre-LayerNorm causal self-attention and GELU MLP."""

    def __init__(self, d=256, heads=4, seq=64):
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.ln2 = nn.LayerNorm(d)
        self.fc = nn.Linear(d, 4 * d)
        self.out = nn.Linear(4 * d, d)
        self.register_buffer("mask", torch.tril(torch.ones(seq, seq, dtype=torch.bool)))

    def forward(self, x):
        b, t, d = x.shape
        h = self.heads
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=2)
        q = q.reshape(b, t, h, d // h).permute(0, 2, 1, 3)
        k = k.reshape(b, t, h, d // h).permute(0, 2, 1, 3)
        v = v.reshape(b, t, h, d // h).permute(0, 2, 1, 3)
        att = torch.matmul(q, k.transpose(-2, -1)) * (1.0 / (d // h) ** 0.5)
        att = att.masked_fill(~self.mask[:t, :t], float("-inf"))
        att = F.softmax(att, dim=-1)
        y = torch.matmul(att, v).permute(0, 2, 1, 3).reshape(b, t, d)
        x = x + self.proj(y)
        return x + self.out(F.gelu(self.fc(self.ln2(x)), approximate="tanh"))


class EncoderLayer(nn.Module):
    """nn.TransformerEncoderLayer written with primitive ops (post-LN, ReLU FFN, no dropout)."""

    def __init__(self, d=512, heads=8, ff=2048):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.ln1 = nn.LayerNorm(d)
        self.ff1 = nn.Linear(d, ff)
        self.ff2 = nn.Linear(ff, d)
        self.ln2 = nn.LayerNorm(d)

    def forward(self, x):
        b, t, d = x.shape
        h = self.heads
        q, k, v = self.qkv(x).split(d, dim=2)
        q = q.reshape(b, t, h, d // h).transpose(1, 2)
        k = k.reshape(b, t, h, d // h).transpose(1, 2)
        v = v.reshape(b, t, h, d // h).transpose(1, 2)
        att = F.softmax(torch.matmul(q, k.transpose(-2, -1)) / (d // h) ** 0.5, dim=-1)
        y = torch.matmul(att, v).transpose(1, 2).reshape(b, t, d)
        x = self.ln1(x + self.proj(y))
        return self.ln2(x + self.ff2(F.relu(self.ff1(x))))


class Stack(nn.Module):
    """`depth` copies of a block in sequence: the generator of very large graphs."""

    def __init__(self, block_fn, depth):
        super().__init__()
        self.blocks = nn.ModuleList([block_fn() for _ in range(depth)])

    def forward(self, x):
        for blk in self.blocks:
            x = blk(x)
        return x


def resnet18():
    import torchvision
    return torchvision.models.resnet18(num_classes=1000)


# name -> (constructor, input shapes, train step?)
ZOO = {
    "mlp_train_small": (lambda: MLP(64, 3, 32, 16), [(16, 32)], True),
    "mlp_train": (lambda: MLP(1024, 3, 1024, 1024), [(256, 1024)], True),
    "resnet18_small": (resnet18, [(1, 3, 32, 32)], False),
    "resnet18": (resnet18, [(1, 3, 224, 224)], False),
    "basic_block_train_small": (lambda: BasicBlock(8), [(2, 8, 8, 8)], True),
    "basic_block_train": (lambda: BasicBlock(64), [(8, 64, 56, 56)], True),
    "encoder_layer_train_small": (lambda: EncoderLayer(32, 4, 64), [(2, 8, 32)], True),
    "encoder_layer_train": (lambda: EncoderLayer(512, 8, 2048), [(8, 128, 512)], True),
    "gpt2_block_small": (lambda: GPT2Block(32, 4, 8), [(2, 8, 32)], False),
    "gpt2_block": (lambda: GPT2Block(768, 12, 128), [(1, 128, 768)], False),
}


def stack(kind: str, depth: int):
    """A deep model for scale tests: 'mlp' or 'gpt2' blocks repeated `depth` times."""
    if kind == "gpt2":
        return Stack(lambda: GPT2Block(32, 4, 8), depth), [(2, 8, 32)]
    return Stack(lambda: nn.Sequential(nn.Linear(32, 32), nn.GELU()), depth), [(4, 32)]


def _factory(entry):
    return lambda: entry[0]()


for _name, _entry in ZOO.items():
    globals()[_name] = _factory(_entry)
