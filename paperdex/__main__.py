from paperdex.cli import main

main()
