"""Scripts run from a checkout (python tools/NAME.py; make cluster, make screenshots).

A package only so that type checking names its modules apart from bench/'s
(tools.cluster, not cluster: bench/cluster.py is another).
"""
