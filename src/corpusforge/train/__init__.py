"""Train sentence encoders on a release's pairs: ``RELEASE/pairs/*/`` -> a model folder.

    corpusforge train --data release/pairs/all --out models/fast
    corpusforge train --data release/pairs/all --out models/minilm --model /path/to/hf-model

Modules, in the order the data flows:

- ``data``: stream Parquet pair shards in a seeded shuffle (pyarrow only, no torch);
- ``losses``: Multiple Negatives Ranking and triplet losses, hard-negative mining;
- ``models``: the built-in fast encoder (P-SP style) and a Hugging Face transformer with
  mean pooling; ``load_encoder(path)`` turns a model folder into an ``Encoder``;
- ``trainer``: the training loop (AdamW, linear schedule with warm-up, seeded);
- ``bitext_eval``: bitext matching accuracy (numpy only, no torch).

Torch, sentencepiece and transformers are the ``train`` extra: importing this package, ``data``
or ``bitext_eval`` needs none of them, and the pipelines never import any module here.
"""
