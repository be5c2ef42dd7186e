"use strict";
// The Run page (owned by its page's work): fills #main.

