import os
import sys

from assembler.cli.main import main

code = main()
# Everything is written and flushed: leave without tearing down the interpreter,
# which for a large analysis means freeing millions of objects one by one.
try:
    sys.stdout.flush()
    sys.stderr.flush()
except BrokenPipeError:
    pass
os._exit(code)
