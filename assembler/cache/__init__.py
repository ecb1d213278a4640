"""The cache engine: tokenizers, the segmenter, the store, one module per
simulator family, the rules file loader, and pricing.

Imports: :mod:`assembler.design` and :mod:`assembler.sessions`; never
``analysis`` or ``cli``. Nothing is re-exported here, so that importing one
module (the tokenizers, say) does not load prices.
"""
