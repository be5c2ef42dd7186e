"use strict";
// The Tools page (owned by its page's work): fills #main.

