// Optional: a Copy button for the ticket markdown. The page works the same without it.
document.querySelectorAll("button.copy").forEach((button) => {
  const target = document.getElementById(button.dataset.copy);
  if (!target) return;
  button.hidden = false;
  button.addEventListener("click", async () => {
    try {
      await navigator.clipboard.writeText(target.value);
    } catch {
      target.select();
      document.execCommand("copy");
    }
    button.textContent = "Copied";
  });
});
