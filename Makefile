# Shortcuts for the commands in README.md; tools/course.py does the work.
PYTHON ?= python3.11

.PHONY: build test bench

build:
	$(PYTHON) tools/course.py build

test:
	$(PYTHON) tools/course.py test

bench:
	$(PYTHON) tools/course.py bench
