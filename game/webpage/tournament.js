// placeholder until the view lands
export function mount(main) { main.textContent = 'coming'; }
