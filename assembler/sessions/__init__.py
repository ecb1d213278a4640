"""Sessions: the recorded-session format and its validation, replay into steps,
the generator, the importers of real transcripts, and text versions.

Imports: :mod:`assembler.design` (and :mod:`assembler.errors`); never ``cache``,
``analysis`` or ``cli``.
"""
