"use strict";
// The Diff page (owned by its page's work): fills #main.

