from diagnostics.cli import main

main()
