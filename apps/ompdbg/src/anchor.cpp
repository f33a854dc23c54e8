int ompdbg_app_anchor = 0;
