"use strict";
// The Runs page (owned by its page's work): fills #main.

