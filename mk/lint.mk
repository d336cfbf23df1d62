# lint.mk - style kept by tools (STYLE.md), scripts/lint.sh:
#   make lint     phony targets, source rules, clang-format --dry-run -Werror
#                 (.clang-format), cppcheck; the "lint" suite of `make test`
#   make format   clang-format -i over every C file (and empties
#                 scripts/format-pending.txt, the files lint does not yet
#                 hold to the format)
.PHONY: lint format
lint: $(GEN_H) | $(TOOLS_STAMP)
	bash scripts/lint.sh

format: | $(TOOLS_STAMP)
	bash scripts/lint.sh --format
