// The watch page: follow a live match's server-sent events and show each turn as the episode viewer does.
(function () {
  var status = document.getElementById("watch-status");
  var turns = document.getElementById("turns");
  if (!status || !turns) { return; }

  function element(tag, className, text) {
    var node = document.createElement(tag);
    if (className) { node.className = className; }
    if (text !== undefined) { node.textContent = text; }  // text, never markup: players write what they like
    return node;
  }

  function returns(values) {
    return Object.keys(values).sort().map(function (seat) { return seat + " " + Number(values[seat]).toFixed(2); }).join(", ");
  }

  function show(event) {
    if (event.kind === "turn") {
      var item = element("li", "turn");
      var head = element("div", "turn-head");
      head.appendChild(element("span", "seat", event.player));
      head.appendChild(document.createTextNode(" "));
      head.appendChild(element("span", "who", "(" + event.agent + ")"));
      head.appendChild(document.createTextNode(" played "));
      head.appendChild(element("code", "action", event.action));
      item.appendChild(head);
      var details = element("details");
      details.appendChild(element("summary", "", "what " + event.player + " saw (episode " + (event.episode + 1) + ")"));
      details.appendChild(element("pre", "", event.seen));
      item.appendChild(details);
      turns.appendChild(item);
      status.textContent = "Playing: episode " + (event.episode + 1) + ", turn " + event.turn + ".";
    } else if (event.kind === "episode") {
      turns.appendChild(element("li", "phase episode-end", "Episode " + (event.episode + 1) + " over: " + returns(event.returns)));
    } else if (event.kind === "end") {
      status.textContent = "";
      if (event.error) {
        status.textContent = "The match ended in an error: " + event.error;
      } else {
        status.appendChild(document.createTextNode("The match is over and stored: "));
        var link = element("a", "submission", "submission #" + event.submission);
        link.href = "../submission/" + event.submission + ".html";
        status.appendChild(link);
        status.appendChild(document.createTextNode(". Mean returns: " + returns(event.returns) + "."));
      }
    }
  }

  var source = new EventSource(status.dataset.events);
  status.textContent = "Waiting for the next turn…";
  source.onmessage = function (message) {
    var event = JSON.parse(message.data);
    show(event);
    if (event.kind === "end") { source.close(); }
  };
  source.onerror = function () {
    // The stream ends with the match; anything else is a lost connection, which EventSource retries on its own.
    if (status.textContent.indexOf("over") < 0) { status.textContent = "Connection lost; retrying…"; }
  };
})();
