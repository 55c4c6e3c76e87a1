// Click a column header to sort its table; click again to reverse.
document.querySelectorAll("table.sortable").forEach(function (table) {
  table.querySelectorAll("th").forEach(function (th, column) {
    th.addEventListener("click", function () {
      var numeric = th.dataset.type === "number";
      var ascending = !th.classList.contains("sorted-asc");
      table.querySelectorAll("th").forEach(function (other) { other.classList.remove("sorted-asc", "sorted-desc"); });
      th.classList.add(ascending ? "sorted-asc" : "sorted-desc");
      var body = table.tBodies[0];
      var rows = Array.prototype.slice.call(body.rows);
      rows.sort(function (a, b) {
        var x = a.cells[column].dataset.value, y = b.cells[column].dataset.value;
        var order;
        if (numeric) {
          // Empty cells (no value) sort last either way.
          if (x === "" || y === "") { return (x === "") - (y === ""); }
          order = parseFloat(x) - parseFloat(y);
        } else {
          order = x.localeCompare(y);
        }
        return ascending ? order : -order;
      });
      rows.forEach(function (row) { body.appendChild(row); });
    });
  });
});
