from letterbox_tui.cli import main

raise SystemExit(main())
