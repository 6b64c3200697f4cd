# bin/module.mk: command-line tools, one per source file.
bin_TOOLS := $(notdir $(wildcard bin/*.cc))
