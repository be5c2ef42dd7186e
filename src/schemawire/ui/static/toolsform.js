"use strict";
// The Tools page's form: built from a tool's input schema (its references inlined by the
// server), it writes the arguments as JSON text. Numbers are written as typed, never through a
// JavaScript number, so what is sent is exactly what the person wrote; the gate, not the form,
// decides what is valid (the form only hints at the bounds).
//
// `toolsForm.build(schema)` returns {node, text(), mark(violations), clear()}.

const toolsForm = (() => {
  const { el } = sw;
  let serial = 0; // ids that tie a label to its input

  const escapeToken = (token) => String(token).replace(/~/g, "~0").replace(/\//g, "~1");
  const quote = (value) => JSON.stringify(value);

  /** A schema and whether it may be null: anyOf/oneOf [X, {type: "null"}] and type [X, "null"]
   *  are X, optional (the form omits an empty value). */
  function unwrap(schema) {
    if (!schema || typeof schema !== "object") return { schema: {}, nullable: false };
    for (const key of ["anyOf", "oneOf"]) {
      const branches = schema[key];
      if (Array.isArray(branches) && branches.length === 2) {
        const other = branches.filter((b) => !(b && b.type === "null"));
        if (other.length === 1) {
          const { [key]: _, ...rest } = schema;
          return { schema: { ...other[0], ...rest }, nullable: true };
        }
      }
    }
    if (Array.isArray(schema.type)) {
      const types = schema.type.filter((t) => t !== "null");
      if (types.length === 1) return { schema: { ...schema, type: types[0] }, nullable: types.length < schema.type.length };
    }
    return { schema, nullable: false };
  }

  function kindOf(schema) {
    if (schema["x-form-note"]) return "json";
    if (Array.isArray(schema.enum)) return "enum";
    if ("const" in schema) return "enum";
    if (schema.type === "object" || (!schema.type && schema.properties)) return "object";
    if (schema.type === "array" && schema.items && typeof schema.items === "object") return "array";
    if (["string", "number", "integer", "boolean"].includes(schema.type)) return schema.type;
    return "json";
  }

  /** What the schema allows, in a few words (the help line under a field). */
  function bounds(schema) {
    const words = [];
    const pairs = [
      ["minimum", "≥"], ["exclusiveMinimum", ">"], ["maximum", "≤"], ["exclusiveMaximum", "<"],
    ];
    for (const [key, sign] of pairs) if (typeof schema[key] === "number") words.push(`${sign} ${schema[key]}`);
    if (schema.minLength !== undefined) words.push(`at least ${counted(schema.minLength, "character")}`);
    if (schema.maxLength !== undefined) words.push(`at most ${counted(schema.maxLength, "character")}`);
    if (schema.pattern) words.push(`matches ${schema.pattern}`);
    if (schema.format) words.push(`format ${schema.format}`);
    if (schema.minItems !== undefined) words.push(`at least ${counted(schema.minItems, "item")}`);
    if (schema.maxItems !== undefined) words.push(`at most ${counted(schema.maxItems, "item")}`);
    if (schema.default !== undefined) words.push(`default ${quote(schema.default)}`);
    return words.join(" · ");
  }

  /** "1 item", "2 items". */
  function counted(count, noun) {
    return `${count} ${noun}${count === 1 ? "" : "s"}`;
  }

  function indent(depth) {
    return "  ".repeat(depth);
  }

  /** One field: {node, text(depth) -> JSON text or undefined (omitted), child(token), assign(pointer)}. */
  function field(schemaIn, name, required) {
    const { schema, nullable } = unwrap(schemaIn);
    const optional = !required || nullable;
    const kind = kindOf(schema);
    const id = `f${++serial}`;
    const make = { object, array, enum: enumField, boolean, string: scalar, number: scalar, integer: scalar, json }[kind];
    const inner = make(schema, id, optional);
    const wrap = el("div", { class: `fld fld-${kind}${name === null && kind === "object" ? " fld-root" : ""}` });
    if (name !== null && kind !== "object") {
      wrap.append(
        el("label", { class: "fld-label", for: id },
          el("span", { class: "fld-name" }, name),
          optional ? el("span", { class: "fld-opt" }, "optional") : el("span", { class: "fld-req", title: "required" }, "required"),
        ),
      );
    }
    const help = [schema.description, bounds(schema), schema["x-form-note"]].filter(Boolean).join(" — ");
    const helpNode = help && kind !== "object" ? el("div", { class: "fld-help" }, help) : null;
    // A list's help says what goes in it: above its items; an input's, under it.
    if (kind === "array") wrap.append(helpNode || "", inner.node);
    else wrap.append(inner.node, helpNode || "");
    const self = {
      node: wrap,
      name,
      text: inner.text,
      child: inner.child || (() => null),
      assign(pointer) {
        wrap.dataset.pointer = pointer;
        if (inner.assign) inner.assign(pointer);
      },
      focus() {
        const target = wrap.querySelector("input, select, textarea");
        if (target) target.focus();
      },
    };
    if (kind === "object" && name !== null) inner.legend(name, optional, schema.description);
    return self;
  }

  function object(schema, id, optional) {
    const properties = schema.properties || {};
    const required = new Set(schema.required || []);
    const fields = Object.entries(properties).map(([key, sub]) => [key, field(sub, key, required.has(key))]);
    const legend = el("legend", {});
    const body = el("div", { class: "fld-members" }, fields.map(([, f]) => f.node));
    const box = el("fieldset", { class: "fld-object", id }, legend, body);
    let include = null;
    return {
      node: box,
      legend(name, isOptional, description) {
        legend.append(el("span", { class: "fld-name" }, name));
        if (isOptional) {
          include = el("input", { type: "checkbox", "aria-label": `include ${name}` });
          const sync = () => body.classList.toggle("hidden", !include.checked);
          include.addEventListener("change", sync);
          legend.append(el("label", { class: "fld-opt fld-include" }, include, "optional · include"));
          sync();
        } else {
          legend.append(el("span", { class: "fld-req" }, "required"));
        }
        if (description) box.insertBefore(el("div", { class: "fld-help" }, description), body);
      },
      text(depth = 0) {
        if (include && !include.checked) return undefined;
        const members = [];
        for (const [key, f] of fields) {
          const value = f.text(depth + 1);
          if (value !== undefined) members.push(`${indent(depth + 1)}${quote(key)}: ${value}`);
        }
        return members.length ? `{\n${members.join(",\n")}\n${indent(depth)}}` : "{}";
      },
      child: (token) => (fields.find(([key]) => key === token) || [])[1] || null,
      assign(pointer) {
        for (const [key, f] of fields) f.assign(`${pointer}/${escapeToken(key)}`);
      },
    };
  }

  function array(schema, id) {
    const items = [];
    const list = el("ol", { class: "fld-items", start: "0" });
    const add = el("button", { type: "button", class: "fld-add", id }, "+ add item");
    const note = el("span", { class: "fld-count muted" });
    let pointer = "";
    const renumber = () => {
      items.forEach((item, index) => item.field.assign(`${pointer}/${index}`));
      note.textContent = `${items.length} item${items.length === 1 ? "" : "s"}`;
    };
    const addItem = () => {
      const f = field(schema.items, null, true);
      const remove = el("button", { type: "button", class: "fld-remove", "aria-label": "remove item", title: "remove item" }, "×");
      const row = el("li", { class: "fld-item" }, f.node, remove);
      const item = { field: f, row };
      remove.addEventListener("click", () => {
        items.splice(items.indexOf(item), 1);
        row.remove();
        renumber();
      });
      items.push(item);
      list.append(row);
      renumber();
      return item;
    };
    add.addEventListener("click", () => addItem().field.focus());
    for (let i = 0; i < (schema.minItems || 0); i++) addItem();
    renumber();
    return {
      node: el("div", { class: "fld-array" }, list, el("div", { class: "fld-array-bar" }, add, note)),
      text(depth = 0) {
        const values = items.map((item) => item.field.text(depth + 1)).filter((v) => v !== undefined);
        return values.length ? `[\n${values.map((v) => indent(depth + 1) + v).join(",\n")}\n${indent(depth)}]` : "[]";
      },
      child: (token) => (/^\d+$/.test(token) && items[Number(token)] ? items[Number(token)].field : null),
      assign(at) {
        pointer = at;
        renumber();
      },
    };
  }

  function enumField(schema, id, optional) {
    const values = Array.isArray(schema.enum) ? schema.enum : [schema.const];
    const select = el("select", { id });
    if (optional) {
      const shown = schema.default !== undefined ? `(omit: default ${quote(schema.default)})` : "(omit)";
      select.append(el("option", { value: "" }, shown));
    }
    values.forEach((value, index) => select.append(el("option", { value: String(index) }, quote(value))));
    if (!optional && schema.default !== undefined) {
      const index = values.findIndex((v) => quote(v) === quote(schema.default));
      if (index >= 0) select.value = String(index);
    }
    return { node: select, text: () => (select.value === "" ? undefined : quote(values[Number(select.value)])) };
  }

  function boolean(schema, id, optional) {
    if (optional) {
      const select = el("select", { id }, el("option", { value: "" }, "(omit)"), el("option", { value: "true" }, "true"), el("option", { value: "false" }, "false"));
      return { node: select, text: () => select.value || undefined };
    }
    const box = el("input", { type: "checkbox", id });
    if (schema.default === true) box.checked = true;
    return { node: box, text: () => (box.checked ? "true" : "false") };
  }

  function scalar(schema, id, optional) {
    const numeric = schema.type !== "string";
    const input = el("input", {
      type: numeric ? "number" : "text",
      id,
      step: numeric ? (schema.type === "integer" ? "1" : "any") : undefined,
      min: numeric && typeof schema.minimum === "number" ? String(schema.minimum) : undefined,
      max: numeric && typeof schema.maximum === "number" ? String(schema.maximum) : undefined,
      placeholder: Array.isArray(schema.examples) && schema.examples.length ? String(schema.examples[0]) : undefined,
      spellcheck: "false",
      autocomplete: "off",
    });
    if (schema.default !== undefined && !optional) input.value = String(schema.default);
    return {
      node: input,
      text() {
        const raw = input.value;
        if (raw === "" && (optional || numeric)) return undefined;
        if (!numeric) return quote(raw);
        return /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/.test(raw) ? raw : quote(raw);
      },
    };
  }

  /** What the form cannot say (a union, an untyped value, a recursive reference): JSON text. */
  function json(schema, id, optional) {
    const area = el("textarea", { id, rows: "2", class: "fld-json", spellcheck: "false", placeholder: "JSON" });
    return { node: area, text: () => (area.value.trim() === "" ? (optional ? undefined : "null") : area.value.trim()) };
  }

  /** The form of ``schema`` (the tool's whole input). */
  function build(schema) {
    const root = field(schema, null, true);
    root.assign("");
    const form = el("div", { class: "tl-form" }, root.node);

    function at(pointer) {
      let current = root;
      let found = root;
      const tokens = pointer === "" ? [] : pointer.slice(1).split("/").map((t) => t.replace(/~1/g, "/").replace(/~0/g, "~"));
      for (const token of tokens) {
        current = current.child(token);
        if (!current) break;
        found = current;
      }
      return found;
    }

    return {
      node: form,
      text: () => root.text(0) ?? "{}",
      clear() {
        for (const node of form.querySelectorAll(".fld-bad")) node.classList.remove("fld-bad");
        for (const node of form.querySelectorAll(".fld-error")) node.remove();
      },
      /** Mark the fields the violations point at (the closest field that exists); returns each
       *  violation's field. */
      mark(violations) {
        return violations.map((violation) => {
          const f = at(violation.pointer);
          f.node.classList.add("fld-bad");
          f.node.append(el("div", { class: "fld-error", role: "alert" }, `${violation.keyword}: ${violation.message}`));
          return f;
        });
      },
    };
  }

  return { build, unwrap };
})();
