"""The design: layers, the component registry, the context, the call tree and its YAML, assembly, the wire.

Everything the model receives is decided here, as the design prescribes it.
Imports: the standard library and :mod:`assembler.errors` only; nothing from
``sessions``, ``cache``, ``analysis`` or ``cli``.
"""
