"""``python -m doclens.cli``: the ``doclens`` command."""

import sys

from doclens.cli import main

sys.exit(main())
