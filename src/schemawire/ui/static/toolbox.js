"use strict";
// The Toolbox page (owned by its page's work): fills #main.

