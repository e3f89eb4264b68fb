"""The gpuviz error family, as the graph layer and its users import it.

The classes are defined in :mod:`gpuviz.errors`, a leaf module, so that
:mod:`gpuviz.formats` (below the graph) raises the same family without
importing the graph package. ``from gpuviz.graph.errors import X`` keeps
working for every name below. Every message starts with the class of object
and its quoted ID, then states the numbers.
"""

from ..errors import *  # noqa: F401,F403 - the whole family
from ..errors import __all__  # noqa: F401
