"""Train sentence encoders on a release's pairs: ``RELEASE/pairs/*/`` -> a model folder.

    corpusforge train --data release/pairs/all --out models/fast
    corpusforge train --data release/pairs/all --out models/minilm --model /path/to/hf-model

Modules, in the order the data flows:

- ``data``: stream Parquet pair shards in a seeded shuffle (pyarrow only, no torch);
- ``losses``: Multiple Negatives Ranking, triplet and distillation (MSE) losses, hard-negative
  mining;
- ``distill``: a frozen teacher's embeddings of a bitext release's anchors, cached as Parquet
  beside the model (``--loss mse --teacher``, Reimers & Gurevych 2020);
- ``models``: the built-in fast encoder (P-SP style) and a Hugging Face transformer with
  mean pooling; ``load_encoder(path)`` turns a model folder into an ``Encoder``;
- ``trainer``: the training loop (AdamW, linear schedule with warm-up, seeded);
- ``bitext_eval``: bitext matching accuracy per language and teacher fidelity (numpy only, no
  torch).

Torch, sentencepiece and transformers are the ``train`` extra: importing this package, ``data``
or ``bitext_eval`` needs none of them, and the pipelines never import any module here.
"""
