"""``python -m doclens``: the ``doclens`` command (the same as ``python -m doclens.cli``)."""

import sys

from doclens.cli import main

sys.exit(main())
