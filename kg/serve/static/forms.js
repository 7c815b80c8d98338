// kg's query page, part two: a form for each named query, local links for kg's IRIs in the
// results, and downloads. Loaded after kg-page.js (which creates window.kgYasgui).
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("kg-examples-data").textContent);
  var examples = data.examples;
  var base = data.base;
  var publicBase = (data.publicBase || "").replace(/\/+$/, "");
  var yasgui = window.kgYasgui;
  var select = document.getElementById("kg-examples");
  var box = document.getElementById("kg-form");
  var downloads = document.getElementById("kg-downloads");
  var CLASS_TYPES = {
    paper: "Paper", author: "Author", method: "Method", task: "Task", dataset: "Dataset",
    repository: "Repository", venue: "Venue", area: "Area"
  };

  function yasqe() { return yasgui.getTab().getYasqe(); }

  // --- links to this server's entity pages --------------------------------------------------
  function localHref(iri) {
    if (!base || iri.indexOf(base) !== 0 || iri.length === base.length) return null;
    return publicBase + "/" + iri.slice(base.length);
  }
  function rewriteLinks(root) {
    var anchors = root.querySelectorAll("a[href]");
    for (var i = 0; i < anchors.length; i++) {
      var a = anchors[i];
      var href = localHref(a.getAttribute("href"));
      if (href === null) continue;
      a.setAttribute("title", a.getAttribute("href"));
      a.setAttribute("href", href);
      a.removeAttribute("target");
      a.classList.add("kg-local");
    }
  }
  var results = document.getElementById("yasgui");
  new MutationObserver(function () { rewriteLinks(results); })
    .observe(results, { childList: true, subtree: true });

  // --- downloads of the query in the editor ---------------------------------------------------
  function isGraphQuery(text) {
    var body = text.replace(/#[^\n]*/g, " ").replace(/<[^>\s]*>/g, "<>");
    var m = /\b(SELECT|ASK|CONSTRUCT|DESCRIBE)\b/i.exec(body);
    return !!m && /^(CONSTRUCT|DESCRIBE)$/i.test(m[1]);
  }
  function refreshDownloads() {
    var graph = isGraphQuery(yasqe().getValue());
    var links = downloads.querySelectorAll("a[data-format]");
    for (var i = 0; i < links.length; i++) {
      links[i].hidden = (links[i].getAttribute("data-graph") === "true") !== graph;
    }
  }
  downloads.addEventListener("click", function (event) {
    var a = event.target.closest("a[data-format]");
    if (!a) return;
    var query = yasqe().getValue();
    a.href = "/sparql?format=" + a.getAttribute("data-format") +
      "&query=" + encodeURIComponent(query);
  });
  function watchEditor() { yasqe().on("change", refreshDownloads); refreshDownloads(); }
  yasgui.on("tabSelect", function () { setTimeout(watchEditor, 0); });
  watchEditor();

  // --- completion of entity names -----------------------------------------------------------
  var LABELS = "{ ?x rdfs:label ?l } UNION { ?x foaf:name ?l } UNION { ?x dcterms:title ?l }";
  function complete(input, list, cls) {
    var timer = null;
    input.addEventListener("input", function () {
      clearTimeout(timer);
      var term = input.value.trim().toLowerCase();
      if (term.length < 2 || term.indexOf("/") >= 0) return;
      timer = setTimeout(function () {
        var query =
          "PREFIX kg: <https://w3id.org/kg/ontology#>\n" +
          "PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>\n" +
          "PREFIX foaf: <http://xmlns.com/foaf/0.1/>\n" +
          "PREFIX dcterms: <http://purl.org/dc/terms/>\n" +
          "SELECT ?x (MIN(?l) AS ?label) WHERE { ?x a kg:" + CLASS_TYPES[cls] + " . " + LABELS +
          " FILTER(CONTAINS(LCASE(STR(?l)), " + JSON.stringify(term) + ")) }" +
          " GROUP BY ?x ORDER BY STRLEN(?label) ?label LIMIT 15";
        fetch("/sparql", {
          method: "POST",
          headers: { "Content-Type": "application/x-www-form-urlencoded",
                     "Accept": "application/sparql-results+json" },
          body: "query=" + encodeURIComponent(query)
        }).then(function (r) { return r.ok ? r.json() : null; }).then(function (json) {
          if (!json) return;
          list.textContent = "";
          json.results.bindings.forEach(function (b) {
            var key = b.x.value.indexOf(base) === 0 ? b.x.value.slice(base.length) : b.x.value;
            var option = document.createElement("option");
            option.value = key;
            option.label = b.label ? b.label.value : key;
            option.textContent = option.label;
            list.appendChild(option);
          });
        }).catch(function () { /* completion is a help, not a requirement */ });
      }, 200);
    });
  }

  // --- the form -----------------------------------------------------------------------------
  function field(example, p) {
    var label = document.createElement("label");
    label.className = "kg-field";
    var name = document.createElement("span");
    name.className = "kg-field-name";
    name.textContent = p.name;
    if (p.required) {
      var mark = document.createElement("abbr");
      mark.title = "required";
      mark.textContent = " *";
      name.appendChild(mark);
    }
    label.appendChild(name);
    var input;
    if (p.type === "boolean") {
      input = document.createElement("select");
      ["true", "false"].forEach(function (v) {
        var o = document.createElement("option");
        o.value = v;
        o.textContent = v;
        input.appendChild(o);
      });
      input.value = p.example || p.default || "false";
    } else {
      input = document.createElement("input");
      input.type = p.type === "integer" || p.type === "decimal" ? "number" :
        p.type === "date" ? "date" : "text";
      if (p.type === "decimal") input.step = "any";
      input.value = p.example || "";
      input.placeholder = p.default !== null && p.default !== undefined ?
        "default: " + p.default : (p["class"] || p.type);
      if (p.type === "iri" && CLASS_TYPES[p["class"]]) {
        var list = document.createElement("datalist");
        list.id = "kg-list-" + example.name + "-" + p.name;
        input.setAttribute("list", list.id);
        input.autocomplete = "off";
        label.appendChild(list);
        complete(input, list, p["class"]);
      }
    }
    input.name = p.name;
    input.required = !!p.required;
    input.title = p.description || "";
    label.appendChild(input);
    var help = document.createElement("span");
    help.className = "kg-field-help";
    help.textContent = p.description || "";
    label.appendChild(help);
    return label;
  }

  function buildForm(example) {
    box.textContent = "";
    box.hidden = !example;
    if (!example) return;
    var form = document.createElement("form");
    form.id = "kg-param-form";
    form.setAttribute("data-query", example.name);
    example.params.forEach(function (p) { form.appendChild(field(example, p)); });
    var run = document.createElement("button");
    run.type = "submit";
    run.textContent = example.params.length ? "Run " + example.name : "Run";
    form.appendChild(run);
    var direct = document.createElement("a");
    direct.className = "kg-direct";
    direct.textContent = "as /queries/" + example.name;
    form.appendChild(direct);
    var problem = document.createElement("p");
    problem.className = "kg-form-error";
    problem.setAttribute("role", "alert");
    form.appendChild(problem);
    function params() {
      var qs = new URLSearchParams();
      example.params.forEach(function (p) {
        var value = form.elements[p.name].value;
        if (value !== "") qs.set(p.name, value);
      });
      return qs;
    }
    function refreshDirect() {
      var qs = params().toString();
      direct.href = "/queries/" + encodeURIComponent(example.name) + (qs ? "?" + qs : "");
    }
    form.addEventListener("input", function () { problem.textContent = ""; refreshDirect(); });
    refreshDirect();
    form.addEventListener("submit", function (event) {
      event.preventDefault();
      problem.textContent = "";
      var qs = params().toString();
      fetch("/queries/" + encodeURIComponent(example.name) + "/sparql" + (qs ? "?" + qs : ""))
        .then(function (r) {
          return r.text().then(function (text) {
            if (!r.ok) throw new Error(text);
            return text;
          });
        })
        .then(function (text) {
          var tab = yasgui.getTab();
          tab.getYasqe().setValue(text);
          tab.getYasqe().query();
        })
        .catch(function (err) { problem.textContent = String(err.message || err); });
    });
    box.appendChild(form);
  }

  select.addEventListener("change", function () {
    buildForm(select.value === "" ? null : examples[Number(select.value)] || null);
  });
  box.hidden = true;
})();
