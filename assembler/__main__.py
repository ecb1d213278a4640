import sys

from assembler.cli import main

sys.exit(main())
