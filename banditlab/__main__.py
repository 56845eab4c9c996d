"""``python -m banditlab``: the ``banditlab`` command."""

from banditlab import main

raise SystemExit(main())
