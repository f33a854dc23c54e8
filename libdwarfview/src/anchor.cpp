namespace ompdbg::dwarf { int dwarf_anchor = 0; }
