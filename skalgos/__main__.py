"""``python -m skalgos``: run the tour."""

import sys

from skalgos._tour import main

if __name__ == "__main__":
    sys.exit(main())
