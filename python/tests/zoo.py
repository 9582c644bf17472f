"""The model zoo of the exporter's tests: each entry builds a model with random weights (seeded)
and random example inputs."""

from __future__ import annotations

import torch
from torch import nn


def _seed(n=0):
    torch.manual_seed(n)


def resnet18():
    import torchvision
    _seed()
    return torchvision.models.resnet18(), (torch.randn(1, 3, 224, 224),)


def resnet50():
    import torchvision
    _seed()
    return torchvision.models.resnet50(), (torch.randn(1, 3, 224, 224),)


def mobilenet_v3_small():
    import torchvision
    _seed()
    m = torchvision.models.mobilenet_v3_small()
    # random BatchNorm statistics, so that normalisation is not the identity
    for mod in m.modules():
        if isinstance(mod, nn.BatchNorm2d):
            mod.running_mean.uniform_(-0.1, 0.1)
            mod.running_var.uniform_(0.5, 1.5)
    return m, (torch.randn(1, 3, 224, 224),)


def vit_b_16():
    import torchvision
    _seed()
    m = torchvision.models.vit_b_16()
    nn.init.normal_(m.heads.head.weight, std=0.02)  # torchvision initialises the head to zeros
    return m, (torch.randn(1, 3, 224, 224),)


def _ids(vocab, shape):
    return torch.randint(0, vocab, shape)


def bert(seq=32, batch=1):
    from transformers import BertConfig, BertModel
    _seed()
    cfg = BertConfig()  # bert-base: 12 layers, hidden 768, 12 heads
    return BertModel(cfg).eval(), (_ids(cfg.vocab_size, (batch, seq)),)


def bert_small(seq=16, batch=2):
    from transformers import BertConfig, BertModel
    _seed()
    cfg = BertConfig(hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=128,
                     vocab_size=1000)
    return BertModel(cfg).eval(), (_ids(cfg.vocab_size, (batch, seq)),)


def bert_qa(seq=32):
    from transformers import BertConfig, BertForQuestionAnswering
    _seed()
    cfg = BertConfig()
    return BertForQuestionAnswering(cfg).eval(), (_ids(cfg.vocab_size, (1, seq)),)


def gpt2(seq=32):
    from transformers import GPT2Config, GPT2LMHeadModel
    _seed()
    cfg = GPT2Config(n_layer=2, n_embd=128, n_head=4, n_positions=128, vocab_size=1000, use_cache=False,
                     bos_token_id=0, eos_token_id=0)
    return GPT2LMHeadModel(cfg).eval(), (_ids(cfg.vocab_size, (1, seq)),)


def llama(seq=32, batch=1):
    from transformers import LlamaConfig, LlamaForCausalLM
    _seed()
    cfg = LlamaConfig(hidden_size=128, intermediate_size=256, num_hidden_layers=2, num_attention_heads=8,
                      num_key_value_heads=2, vocab_size=1000, max_position_embeddings=256, use_cache=False)
    return LlamaForCausalLM(cfg).eval(), (_ids(cfg.vocab_size, (batch, seq)),)


class MHA(nn.Module):
    def __init__(self):
        super().__init__()
        self.attn = nn.MultiheadAttention(32, 4, batch_first=True)

    def forward(self, q, k, v):
        return self.attn(q, k, v)


def mha():
    _seed()
    return MHA(), (torch.randn(2, 5, 32), torch.randn(2, 7, 32), torch.randn(2, 7, 32))


def lstm():
    _seed()
    return nn.LSTM(16, 32, num_layers=2, batch_first=True), (torch.randn(2, 7, 16),)


class ConvNet(nn.Module):
    """Conv1d, BatchNorm1d, GroupNorm, ConvTranspose2d, BatchNorm2d, pooling."""

    def __init__(self):
        super().__init__()
        self.conv1d = nn.Conv1d(4, 8, 3, padding=1, stride=2)
        self.bn1d = nn.BatchNorm1d(8)
        self.gn = nn.GroupNorm(4, 8)
        self.convt = nn.ConvTranspose2d(8, 6, 3, stride=2, padding=1, output_padding=1)
        self.convt_g = nn.ConvTranspose2d(6, 4, 4, stride=2, padding=1, groups=2)
        self.bn2d = nn.BatchNorm2d(4)
        self.pool = nn.AvgPool2d(2, ceil_mode=True, count_include_pad=False)

    def forward(self, x):
        y = torch.relu(self.bn1d(self.conv1d(x)))  # [B, 8, 8]
        y = self.gn(y)
        y = y.unsqueeze(-1).expand(-1, -1, -1, 3)  # [B, 8, 8, 3]
        y = self.convt(y)  # [B, 6, 16, 6]
        y = self.bn2d(self.convt_g(y))  # [B, 4, 32, 12]
        return self.pool(torch.nn.functional.gelu(y, approximate="tanh"))


def convnet():
    _seed()
    m = ConvNet()
    for mod in m.modules():
        if isinstance(mod, (nn.BatchNorm1d, nn.BatchNorm2d)):
            mod.running_mean.uniform_(-0.5, 0.5)
            mod.running_var.uniform_(0.5, 2.0)
            mod.weight.data.uniform_(0.5, 1.5)
            mod.bias.data.uniform_(-0.5, 0.5)
    return m, (torch.randn(2, 4, 16),)


class EmbedNet(nn.Module):
    """Embedding, LayerNorm, a Sequential stack of blocks, log_softmax."""

    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(50, 24)
        self.blocks = nn.Sequential(*[nn.Sequential(nn.LayerNorm(24), nn.Linear(24, 24), nn.SiLU())
                                      for _ in range(3)])
        self.head = nn.Linear(24, 10)

    def forward(self, ids):
        h = self.emb(ids)
        h = self.blocks(h) + h
        return torch.log_softmax(self.head(h), dim=-1), h.mean(dim=1)


def embednet():
    _seed()
    return EmbedNet(), (torch.randint(0, 50, (3, 6)),)


ZOO = {
    "resnet18": resnet18, "resnet50": resnet50, "mobilenet_v3_small": mobilenet_v3_small, "vit_b_16": vit_b_16,
    "bert": bert, "bert_qa": bert_qa, "gpt2": gpt2, "llama": llama, "mha": mha, "lstm": lstm,
    "convnet": convnet, "embednet": embednet,
}
