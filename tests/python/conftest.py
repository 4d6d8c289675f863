"""conftest.py: puts the numpy reference (tests/golden/reference.py) on the path for the gsmooth module's tests."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "golden"))
