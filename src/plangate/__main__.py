from plangate.cli import main

raise SystemExit(main())
