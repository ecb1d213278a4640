import sys

from assembler.cli.main import main

sys.exit(main())
