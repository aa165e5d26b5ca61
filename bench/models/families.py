"""Model families of the model set beyond torchvision: text and audio models
built from `transformers` configs, timm families, a YOLO detector
(`ultralytics`, from its yaml) and a U-Net (`segmentation_models_pytorch`).

Every model is built from a config with seeded random weights (nothing is
downloaded) and returns a Spec: the module, its named and typed sample inputs
and the names of its outputs. bench/models/export_models.py exports them with
both PyTorch exporters; this module only builds them.
"""
import collections

# name -> (family, builder name). The families and their sizes are chosen to
# load quickly on PoCL while keeping each architecture's structure: the same
# blocks, masks, position encodings and front-ends as the full-size models.
TEXT_AUDIO = {
    "bert": "text",          # BERT-style encoder: int64 ids, an int64 attention mask
    "gpt2": "text",          # GPT-2-style decoder without a cache: causal mask
    "t5_encoder": "text",    # T5-style encoder: relative-position buckets
    "whisper_encoder": "audio",  # Whisper-style encoder: 1-D convs over 80x3000
    "wav2vec2": "audio",     # wav2vec2-style: conv front-end, GroupNorm, grouped pos conv
    "segformer": "vision",   # SegFormer (transformers): efficient attention, 1x1 decode head
}
TIMM = [
    "deit_tiny_patch16_224", "convnextv2_atto", "mobilevit_xxs", "poolformer_s12",
    "levit_128s", "repvgg_a0", "ghostnet_100", "edgenext_xx_small", "pvt_v2_b0",
    "efficientvit_b0", "xcit_nano_12_p16_224", "nf_regnet_b0", "fastvit_t8",
    "mobilenetv4_conv_small",
]
OTHER = {"yolov8n": "detection", "unet_resnet18": "segmentation"}

# Text inputs: batch 2 with a different attention mask per row (the second
# row padded), so that the mask chain is checked on masked positions.
TEXT_BATCH = 2
TEXT_LENGTH = 64
TEXT_PAD = 23  # padded positions at the end of the second row

# Decoders with a KV cache (past key/values in, present out), family
# "decoder": GPT-2-small-sized, and the same decoder at 2 layers, 64 wide,
# 256 tokens for tests. Not in names() ('families'): export_models.py takes
# them by name or as 'decoders'. Their dynamic axes (batch, sequence, past)
# are exported always, not only with --dynamic-batch.
WITH_PAST = {
    # name -> GPT2Config arguments
    # initializer_range 0.1 (transformers' default is 0.02): at 0.02 the
    # random decoder's greedy ids repeat one token whatever the prompt, and
    # a comparison of 128 greedy ids would test one id; at 0.1 20 of the
    # first 24 differ (smallest top-two logit gap 0.014, logits up to 13).
    # Speed does not depend on the values.
    "gpt2_past": dict(vocab_size=50257, n_embd=768, n_layer=12, n_head=12, n_positions=1024,
                      initializer_range=0.1),
    # initializer_range 0.3: at the default 0.02 a 2-layer random decoder
    # repeats one token whatever the prompt, and a greedy reference would
    # test little; at 0.3 the 16 greedy ids vary and the top two logits of
    # every step are still >= 0.04 apart (logits up to about 9).
    "gpt2_past_tiny": dict(vocab_size=256, n_embd=64, n_layer=2, n_head=4, n_positions=128,
                           bos_token_id=0, eos_token_id=None, pad_token_id=None,
                           initializer_range=0.3),
}
# The sample step of a with-past export: batch 2, 3 new tokens after 5 cached
# ones (no size is 0 or 1, so torch.export keeps every axis symbolic).
PAST_BATCH = 2
PAST_SEQUENCE = 3
PAST_LENGTH = 5

Spec = collections.namedtuple("Spec", "model inputs outputs dynamic_axes")


def names():
    return list(TEXT_AUDIO) + ["timm_" + n for n in TIMM] + list(OTHER)


def family(name):
    if name in WITH_PAST:
        return "decoder"
    if name in TEXT_AUDIO:
        return TEXT_AUDIO[name]
    if name in OTHER:
        return OTHER[name]
    return "timm"


def _wrap(module, input_names, output_keys):
    import torch

    class Wrapped(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.m = module

        def forward(self, *args):
            out = self.m(**dict(zip(input_names, args)))
            if isinstance(out, (tuple, list)):
                return tuple(out[:len(output_keys)]) if len(output_keys) > 1 else out[0]
            if isinstance(out, torch.Tensor):
                return out
            values = tuple(out[k] for k in output_keys)
            return values if len(values) > 1 else values[0]

    return Wrapped().eval()


def _text_inputs(rng, vocab, length=TEXT_LENGTH):
    import numpy as np
    ids = rng.integers(0, vocab, size=(TEXT_BATCH, length), dtype=np.int64)
    mask = np.ones((TEXT_BATCH, length), dtype=np.int64)
    mask[1, length - TEXT_PAD:] = 0
    return collections.OrderedDict(input_ids=ids, attention_mask=mask)


def _text_axes(inputs, outputs):
    axes = {n: {0: "batch", 1: "sequence"} for n in inputs}
    axes.update({n: {0: "batch", 1: "sequence"} for n in outputs})
    return axes


def gpt2_past_config(name):
    """The transformers GPT2Config of a WITH_PAST model."""
    from transformers import GPT2Config
    return GPT2Config(**WITH_PAST[name])


def past_names(layers):
    """The KV input and output names of a with-past decoder of LAYERS layers,
    in the order of its inputs (after input_ids, attention_mask,
    position_ids) and outputs (after logits)."""
    ins = [f"past_key_values.{i}.{kv}" for i in range(layers) for kv in ("key", "value")]
    outs = [f"present.{i}.{kv}" for i in range(layers) for kv in ("key", "value")]
    return ins, outs


def gpt2_past_lm(name, seed):
    """The GPT2LMHeadModel of a WITH_PAST model, weights from
    torch.manual_seed(SEED)."""
    import torch
    from transformers import GPT2LMHeadModel
    torch.manual_seed(seed)
    return GPT2LMHeadModel(gpt2_past_config(name)).eval()


def with_past_step(lm):
    """Wraps LM as one decoder step over flat tensors: (input_ids [B, S],
    attention_mask [B, P+S], position_ids [B, S], past key, past value per
    layer [B, H, P, D]) -> (logits [B, S, V], present key, present value per
    layer [B, H, P+S, D]), the layout of transformers' ONNX exports."""
    import torch
    import inspect
    from transformers import DynamicCache
    layers = lm.config.n_layer
    # transformers 5.2x names the argument `cache`, earlier ones `past_key_values`.
    params = inspect.signature(lm.forward).parameters
    cache_arg = "cache" if "cache" in params else "past_key_values"

    class Step(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lm = lm

        def forward(self, *args):
            input_ids, attention_mask, position_ids = args[:3]
            past = args[3:]
            cache = DynamicCache([(past[2 * i], past[2 * i + 1]) for i in range(layers)],
                                 config=self.lm.config)
            out = self.lm(input_ids=input_ids, attention_mask=attention_mask,
                          position_ids=position_ids, use_cache=True, **{cache_arg: cache})
            present = []
            for layer in out.past_key_values.layers:
                present += [layer.keys, layer.values]
            return (out.logits, *present)

    return Step().eval()


def make(name, seed):
    """Builds NAME with weights from torch.manual_seed(SEED) and sample
    inputs from numpy's default_rng(SEED)."""
    import numpy as np
    import torch

    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    if name == "bert":
        from transformers import BertConfig, BertModel
        cfg = BertConfig(vocab_size=30522, hidden_size=256, num_hidden_layers=4,
                         num_attention_heads=4, intermediate_size=1024,
                         max_position_embeddings=512)
        m = BertModel(cfg, add_pooling_layer=False).eval()
        inputs = _text_inputs(rng, cfg.vocab_size)
        outs = ["last_hidden_state"]
        return Spec(_wrap(m, list(inputs), outs), inputs, outs, _text_axes(inputs, outs))
    if name == "gpt2":
        from transformers import GPT2Config, GPT2LMHeadModel
        cfg = GPT2Config(vocab_size=50257, n_embd=256, n_layer=4, n_head=4, n_positions=1024,
                         use_cache=False)
        m = GPT2LMHeadModel(cfg).eval()
        # Padded on the right: no query row is masked out entirely (a row of
        # a left-padded prompt that sees nothing is undefined, and exporters
        # differ on it).
        inputs = _text_inputs(rng, cfg.vocab_size)
        outs = ["logits"]
        return Spec(_wrap(m, list(inputs), outs), inputs, outs, _text_axes(inputs, outs))
    if name in WITH_PAST:
        lm = gpt2_past_lm(name, seed)
        cfg = lm.config
        b, s, p = PAST_BATCH, PAST_SEQUENCE, PAST_LENGTH
        head_dim = cfg.n_embd // cfg.n_head
        inputs = collections.OrderedDict(
            input_ids=rng.integers(0, cfg.vocab_size, size=(b, s), dtype=np.int64),
            attention_mask=np.ones((b, p + s), dtype=np.int64),
            position_ids=np.tile(np.arange(p, p + s, dtype=np.int64), (b, 1)))
        past_in, past_out = past_names(cfg.n_layer)
        for n in past_in:
            inputs[n] = rng.standard_normal((b, cfg.n_head, p, head_dim)).astype(np.float32)
        outs = ["logits"] + past_out
        axes = {"input_ids": {0: "batch", 1: "sequence"},
                "attention_mask": {0: "batch", 1: "total_sequence"},
                "position_ids": {0: "batch", 1: "sequence"},
                "logits": {0: "batch", 1: "sequence"}}
        axes.update({n: {0: "batch", 2: "past_sequence"} for n in past_in})
        axes.update({n: {0: "batch", 2: "total_sequence"} for n in past_out})
        return Spec(with_past_step(lm), inputs, outs, axes)
    if name == "t5_encoder":
        from transformers import T5Config, T5EncoderModel
        cfg = T5Config(vocab_size=32128, d_model=256, d_kv=32, d_ff=1024, num_layers=4,
                       num_heads=8, relative_attention_num_buckets=32)
        m = T5EncoderModel(cfg).eval()
        inputs = _text_inputs(rng, cfg.vocab_size)
        outs = ["last_hidden_state"]
        return Spec(_wrap(m, list(inputs), outs), inputs, outs, _text_axes(inputs, outs))
    if name == "whisper_encoder":
        from transformers import WhisperConfig, WhisperModel
        cfg = WhisperConfig(num_mel_bins=80, d_model=256, encoder_layers=2,
                            encoder_attention_heads=4, encoder_ffn_dim=1024, decoder_layers=1,
                            decoder_attention_heads=4, decoder_ffn_dim=256,
                            max_source_positions=1500)
        m = WhisperModel(cfg).get_encoder().eval()
        inputs = collections.OrderedDict(
            input_features=rng.standard_normal((1, 80, 3000)).astype(np.float32))
        outs = ["last_hidden_state"]
        return Spec(_wrap(m, list(inputs), outs), inputs, outs, None)
    if name == "wav2vec2":
        from transformers import Wav2Vec2Config, Wav2Vec2Model
        cfg = Wav2Vec2Config(hidden_size=256, num_hidden_layers=2, num_attention_heads=4,
                             intermediate_size=1024, conv_dim=(128,) * 7,
                             num_conv_pos_embeddings=128, num_conv_pos_embedding_groups=16,
                             feat_extract_norm="group", do_stable_layer_norm=False)
        m = Wav2Vec2Model(cfg).eval()
        inputs = collections.OrderedDict(
            input_values=rng.uniform(-1.0, 1.0, (1, 16000)).astype(np.float32))
        outs = ["last_hidden_state"]
        return Spec(_wrap(m, list(inputs), outs), inputs, outs, None)
    if name == "segformer":
        from transformers import SegformerConfig, SegformerForSemanticSegmentation
        cfg = SegformerConfig(num_labels=19)
        m = SegformerForSemanticSegmentation(cfg).eval()
        inputs = collections.OrderedDict(
            pixel_values=rng.uniform(-1.0, 1.0, (1, 3, 224, 224)).astype(np.float32))
        outs = ["logits"]
        return Spec(_wrap(m, list(inputs), outs), inputs, outs, None)
    if name == "yolov8n":
        from ultralytics.nn.tasks import DetectionModel
        m = DetectionModel("yolov8n.yaml", nc=80, verbose=False).eval()
        m = m.fuse(verbose=False)
        inputs = collections.OrderedDict(
            images=rng.uniform(0.0, 1.0, (1, 3, 320, 320)).astype(np.float32))
        # Eval mode returns (decoded boxes and scores, raw maps): the first
        # is the raw head without NMS, as `yolo export format=onnx` gives it.
        outs = ["output0"]
        return Spec(_wrap(m, ["x"], outs), inputs, outs, None)
    if name == "unet_resnet18":
        import segmentation_models_pytorch as smp
        m = smp.Unet("resnet18", encoder_weights=None, classes=2).eval()
        inputs = collections.OrderedDict(
            input=rng.uniform(-1.0, 1.0, (1, 3, 224, 224)).astype(np.float32))
        outs = ["output"]
        return Spec(_wrap(m, ["x"], outs), inputs, outs, None)
    if name.startswith("timm_"):
        import timm
        arch = name[len("timm_"):]
        m = timm.create_model(arch, pretrained=False).eval()
        size = m.pretrained_cfg.get("input_size", (3, 224, 224))
        inputs = collections.OrderedDict(
            input=rng.uniform(-1.0, 1.0, (1,) + tuple(size)).astype(np.float32))
        outs = ["output"]
        return Spec(_wrap(m, ["x"], outs), inputs, outs, None)
    raise KeyError(name)


def image_resolution(spec):
    """The height of an image model's one 4-D float input, else None (used to
    calibrate BatchNorm statistics)."""
    if len(spec.inputs) != 1:
        return None
    x = next(iter(spec.inputs.values()))
    return x.shape[2] if x.ndim == 4 and x.shape[2] == x.shape[3] else None
