"""ragbench: a workbench for grounded, cited answers over private documents."""
