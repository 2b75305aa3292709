/**
 * A small stand-in for the `obsidian` module, which ships only type
 * declarations. vitest aliases `obsidian` to this file; the bundle smoke test
 * hands it to main.js as require("obsidian"); the screenshot tool renders the
 * panel with it. Every export must be declared in obsidian.d.ts and every
 * method must exist there (tests/mock-drift.test.ts); test-only helpers end in
 * `__` and are exempt.
 */

/* ---------------------------------------------------------------- DOM helpers Obsidian adds to elements */

interface ElementInfo {
	cls?: string | string[];
	text?: string | DocumentFragment;
	attr?: Record<string, string | number | boolean | null>;
	title?: string;
	type?: string;
	value?: string;
	placeholder?: string;
	href?: string;
}

function applyInfo(el: HTMLElement, info?: ElementInfo | string): void {
	if (info === undefined) return;
	if (typeof info === "string") {
		el.className = info;
		return;
	}
	const classes = Array.isArray(info.cls) ? info.cls : (info.cls ?? "").split(/\s+/);
	for (const cls of classes) if (cls) el.classList.add(cls);
	if (typeof info.text === "string") el.textContent = info.text;
	else if (info.text) el.appendChild(info.text);
	for (const [key, value] of Object.entries(info.attr ?? {})) {
		if (value !== null && value !== false) el.setAttribute(key, String(value));
	}
	for (const key of ["title", "type", "value", "placeholder", "href"] as const) {
		const value = info[key];
		if (value !== undefined) el.setAttribute(key, value);
	}
}

/** Put createEl, createDiv, createSpan, empty, setText, addClass, ... on HTMLElement.prototype. */
export function installDomHelpers__(): void {
	if (typeof HTMLElement === "undefined") return;
	const proto = HTMLElement.prototype as unknown as Record<string, unknown>;
	const helpers: Record<string, unknown> = {
		createEl(this: HTMLElement, tag: string, info?: ElementInfo | string, callback?: (el: HTMLElement) => void) {
			const el = this.ownerDocument.createElement(tag);
			applyInfo(el, info);
			this.appendChild(el);
			callback?.(el);
			return el;
		},
		createDiv(this: HTMLElement, info?: ElementInfo | string, callback?: (el: HTMLElement) => void) {
			return (this as unknown as { createEl: (...a: unknown[]) => HTMLElement }).createEl("div", info, callback);
		},
		createSpan(this: HTMLElement, info?: ElementInfo | string, callback?: (el: HTMLElement) => void) {
			return (this as unknown as { createEl: (...a: unknown[]) => HTMLElement }).createEl("span", info, callback);
		},
		empty(this: HTMLElement) {
			while (this.firstChild) this.removeChild(this.firstChild);
		},
		setText(this: HTMLElement, text: string) {
			this.textContent = text;
		},
		getText(this: HTMLElement) {
			return this.textContent ?? "";
		},
		addClass(this: HTMLElement, ...classes: string[]) {
			this.classList.add(...classes);
		},
		removeClass(this: HTMLElement, ...classes: string[]) {
			this.classList.remove(...classes);
		},
		toggleClass(this: HTMLElement, classes: string | string[], value: boolean) {
			for (const cls of Array.isArray(classes) ? classes : [classes]) this.classList.toggle(cls, value);
		},
		hasClass(this: HTMLElement, cls: string) {
			return this.classList.contains(cls);
		},
		setAttr(this: HTMLElement, name: string, value: string | number | boolean | null) {
			if (value === null) this.removeAttribute(name);
			else this.setAttribute(name, String(value));
		},
		detach(this: HTMLElement) {
			this.remove();
		},
	};
	for (const [name, fn] of Object.entries(helpers)) {
		if (!(name in proto)) Object.defineProperty(proto, name, { value: fn, configurable: true, writable: true });
	}
}

installDomHelpers__();

function div(cls: string): HTMLElement {
	const el = document.createElement("div");
	el.className = cls;
	return el;
}

/* ---------------------------------------------------------------- events and components */

export interface MockEventRef {
	events: Events;
	name: string;
	callback: (...data: unknown[]) => unknown;
}

export class Events {
	handlers__ = new Map<string, MockEventRef[]>();

	on(name: string, callback: (...data: never[]) => unknown): MockEventRef {
		const ref: MockEventRef = { events: this, name, callback: callback as (...data: unknown[]) => unknown };
		this.handlers__.set(name, [...(this.handlers__.get(name) ?? []), ref]);
		return ref;
	}

	off(name: string, callback: (...data: unknown[]) => unknown): void {
		this.handlers__.set(name, (this.handlers__.get(name) ?? []).filter((ref) => ref.callback !== callback));
	}

	offref(ref: MockEventRef): void {
		this.handlers__.set(ref.name, (this.handlers__.get(ref.name) ?? []).filter((other) => other !== ref));
	}

	trigger(name: string, ...data: unknown[]): void {
		for (const ref of this.handlers__.get(name) ?? []) ref.callback(...data);
	}

	tryTrigger(ref: MockEventRef, args: unknown[]): void {
		ref.callback(...args);
	}

	listenerCount__(name: string): number {
		return this.handlers__.get(name)?.length ?? 0;
	}
}

export class Component {
	loaded__ = false;
	cleanups__: (() => unknown)[] = [];
	children__: Component[] = [];
	intervals__: number[] = [];
	domEvents__: { el: EventTarget; type: string }[] = [];

	load(): void {
		if (this.loaded__) return;
		this.loaded__ = true;
		void this.onload();
		for (const child of this.children__) child.load();
	}

	onload(): void | Promise<void> {}

	unload(): void {
		if (!this.loaded__) return;
		this.loaded__ = false;
		for (const child of this.children__) child.unload();
		for (const cleanup of this.cleanups__.splice(0).reverse()) cleanup();
		this.onunload();
	}

	onunload(): void {}

	addChild<T extends Component>(child: T): T {
		this.children__.push(child);
		if (this.loaded__) child.load();
		return child;
	}

	removeChild<T extends Component>(child: T): T {
		this.children__ = this.children__.filter((other) => other !== child);
		child.unload();
		return child;
	}

	register(cleanup: () => unknown): void {
		this.cleanups__.push(cleanup);
	}

	registerEvent(ref: MockEventRef): void {
		this.register(() => ref.events.offref(ref));
	}

	registerDomEvent(el: EventTarget, type: string, callback: (evt: Event) => unknown, options?: boolean | AddEventListenerOptions): void {
		el.addEventListener(type, callback, options);
		this.domEvents__.push({ el, type });
		this.register(() => el.removeEventListener(type, callback, options));
	}

	registerInterval(id: number): number {
		this.intervals__.push(id);
		this.register(() => window.clearInterval(id));
		return id;
	}
}

/* ---------------------------------------------------------------- files and the adapter */

export abstract class TAbstractFile {
	vault: unknown = null;
	path = "";
	name = "";
	parent: TFolder | null = null;
}

export class TFile extends TAbstractFile {
	basename = "";
	extension = "";
	stat = { ctime: 0, mtime: 0, size: 0 };
}

export class TFolder extends TAbstractFile {
	children: TAbstractFile[] = [];

	isRoot(): boolean {
		return this.path === "/" || this.path === "";
	}
}

export function makeFile__(path: string): TFile {
	const file = new TFile();
	file.path = path;
	file.name = path.split("/").pop() ?? path;
	const dot = file.name.lastIndexOf(".");
	file.basename = dot > 0 ? file.name.slice(0, dot) : file.name;
	file.extension = dot > 0 ? file.name.slice(dot + 1) : "";
	return file;
}

export class FileSystemAdapter {
	files__ = new Map<string, string>();

	constructor(private readonly basePath__ = "/vault") {}

	getName(): string {
		return this.basePath__.split("/").pop() ?? "";
	}

	getBasePath(): string {
		return this.basePath__;
	}

	exists(path: string): Promise<boolean> {
		return Promise.resolve(this.files__.has(path));
	}

	read(path: string): Promise<string> {
		const text = this.files__.get(path);
		return text === undefined ? Promise.reject(new Error(`ENOENT: ${path}`)) : Promise.resolve(text);
	}
}

/* ---------------------------------------------------------------- plugin, views, leaves */

export interface MockCommand {
	id: string;
	name: string;
	callback?: () => unknown;
	checkCallback?: (checking: boolean) => boolean | void;
}

export abstract class Plugin extends Component {
	app: unknown;
	manifest: unknown;
	commands__: MockCommand[] = [];
	views__ = new Map<string, (leaf: WorkspaceLeaf) => View>();
	settingTabs__: PluginSettingTab[] = [];
	statusBarItems__: HTMLElement[] = [];
	ribbonIcons__: { icon: string; title: string; callback: (evt: MouseEvent) => unknown }[] = [];
	data__: unknown = null;

	constructor(app: unknown, manifest: unknown) {
		super();
		this.app = app;
		this.manifest = manifest;
	}

	addCommand(command: MockCommand): MockCommand {
		this.commands__.push(command);
		return command;
	}

	registerView(type: string, creator: (leaf: WorkspaceLeaf) => View): void {
		this.views__.set(type, creator);
	}

	addSettingTab(tab: PluginSettingTab): void {
		this.settingTabs__.push(tab);
	}

	addStatusBarItem(): HTMLElement {
		const el = div("status-bar-item");
		this.statusBarItems__.push(el);
		return el;
	}

	addRibbonIcon(icon: string, title: string, callback: (evt: MouseEvent) => unknown): HTMLElement {
		this.ribbonIcons__.push({ icon, title, callback });
		return div("side-dock-ribbon-action");
	}

	loadData(): Promise<unknown> {
		return Promise.resolve(this.data__);
	}

	saveData(data: unknown): Promise<void> {
		this.data__ = JSON.parse(JSON.stringify(data)) as unknown;
		return Promise.resolve();
	}
}

export class WorkspaceLeaf extends Events {
	view: View | null = null;
	viewStates__: unknown[] = [];
	opened__: string[] = [];

	constructor(public app: unknown = null) {
		super();
	}

	setViewState(state: unknown): Promise<void> {
		this.viewStates__.push(state);
		return Promise.resolve();
	}

	openFile(file: TFile): Promise<void> {
		this.opened__.push(file.path);
		return Promise.resolve();
	}
}

export abstract class View extends Component {
	app: unknown;
	icon = "";
	navigation = false;
	leaf: WorkspaceLeaf;
	containerEl: HTMLElement;

	constructor(leaf: WorkspaceLeaf) {
		super();
		this.leaf = leaf;
		this.app = leaf.app;
		this.containerEl = div("workspace-leaf-content");
	}

	onOpen(): Promise<void> {
		return Promise.resolve();
	}

	onClose(): Promise<void> {
		return Promise.resolve();
	}

	abstract getViewType(): string;
	abstract getDisplayText(): string;

	getIcon(): string {
		return this.icon;
	}
}

export abstract class ItemView extends View {
	contentEl: HTMLElement;

	constructor(leaf: WorkspaceLeaf) {
		super(leaf);
		this.containerEl.appendChild(div("view-header"));
		this.contentEl = div("view-content");
		this.containerEl.appendChild(this.contentEl);
	}
}

/* ---------------------------------------------------------------- modals */

export class Modal {
	app: unknown;
	containerEl = div("modal-container");
	modalEl = div("modal");
	titleEl = div("modal-title");
	contentEl = div("modal-content");

	constructor(app: unknown) {
		this.app = app;
		this.containerEl.appendChild(this.modalEl);
		this.modalEl.append(this.titleEl, this.contentEl);
	}

	open(): void {
		document.body.appendChild(this.containerEl);
		void this.onOpen();
	}

	close(): void {
		this.onClose();
		this.containerEl.remove();
	}

	onOpen(): void | Promise<void> {}

	onClose(): void {}

	setTitle(title: string): this {
		this.titleEl.textContent = title;
		return this;
	}
}

export abstract class SuggestModal<T> extends Modal {
	limit = 100;
	emptyStateText = "No results found.";
	inputEl = document.createElement("input");
	resultContainerEl = div("prompt-results");

	constructor(app: unknown) {
		super(app);
		this.modalEl.prepend(this.inputEl);
		this.modalEl.appendChild(this.resultContainerEl);
	}

	setPlaceholder(placeholder: string): void {
		this.inputEl.placeholder = placeholder;
	}

	setInstructions(): void {}

	onNoSuggestion(): void {}

	selectSuggestion(value: T, evt: MouseEvent | KeyboardEvent): void {
		this.close();
		this.onChooseSuggestion(value, evt);
	}

	abstract getSuggestions(query: string): T[] | Promise<T[]>;
	abstract renderSuggestion(value: T, el: HTMLElement): void;
	abstract onChooseSuggestion(item: T, evt: MouseEvent | KeyboardEvent): void;
}

/* ---------------------------------------------------------------- settings */

export abstract class SettingTab {
	app: unknown;
	containerEl = div("vertical-tab-content");

	constructor(app: unknown) {
		this.app = app;
	}

	abstract display(): void;

	hide(): void {
		this.containerEl.replaceChildren();
	}
}

export abstract class PluginSettingTab extends SettingTab {
	plugin: unknown;

	constructor(app: unknown, plugin: unknown) {
		super(app);
		this.plugin = plugin;
	}
}

export abstract class BaseComponent {
	disabled = false;

	then(callback: (component: this) => unknown): this {
		callback(this);
		return this;
	}

	setDisabled(disabled: boolean): this {
		this.disabled = disabled;
		return this;
	}
}

export abstract class ValueComponent<T> extends BaseComponent {
	abstract getValue(): T;
	abstract setValue(value: T): this;
}

export class AbstractTextComponent<E extends HTMLInputElement | HTMLTextAreaElement> extends ValueComponent<string> {
	inputEl: E;
	changeCallback__: ((value: string) => unknown) | null = null;

	constructor(inputEl: E) {
		super();
		this.inputEl = inputEl;
		inputEl.addEventListener("input", () => this.onChanged());
	}

	getValue(): string {
		return this.inputEl.value;
	}

	setValue(value: string): this {
		this.inputEl.value = value;
		return this;
	}

	setPlaceholder(placeholder: string): this {
		this.inputEl.placeholder = placeholder;
		return this;
	}

	onChanged(): void {
		void this.changeCallback__?.(this.getValue());
	}

	onChange(callback: (value: string) => unknown): this {
		this.changeCallback__ = callback;
		return this;
	}
}

export class TextComponent extends AbstractTextComponent<HTMLInputElement> {
	constructor(containerEl: HTMLElement) {
		const input = document.createElement("input");
		input.type = "text";
		containerEl.appendChild(input);
		super(input);
	}
}

export class ToggleComponent extends ValueComponent<boolean> {
	toggleEl = div("checkbox-container");
	value__ = false;
	changeCallback__: ((value: boolean) => unknown) | null = null;

	constructor(containerEl: HTMLElement) {
		super();
		containerEl.appendChild(this.toggleEl);
		this.toggleEl.addEventListener("click", () => {
			this.setValue(!this.value__);
			void this.changeCallback__?.(this.value__);
		});
	}

	getValue(): boolean {
		return this.value__;
	}

	setValue(on: boolean): this {
		this.value__ = on;
		this.toggleEl.classList.toggle("is-enabled", on);
		return this;
	}

	onChange(callback: (value: boolean) => unknown): this {
		this.changeCallback__ = callback;
		return this;
	}
}

export class DropdownComponent extends ValueComponent<string> {
	selectEl = document.createElement("select");
	changeCallback__: ((value: string) => unknown) | null = null;

	constructor(containerEl: HTMLElement) {
		super();
		containerEl.appendChild(this.selectEl);
		this.selectEl.addEventListener("change", () => void this.changeCallback__?.(this.selectEl.value));
	}

	addOption(value: string, display: string): this {
		const option = document.createElement("option");
		option.value = value;
		option.textContent = display;
		this.selectEl.appendChild(option);
		return this;
	}

	addOptions(options: Record<string, string>): this {
		for (const [value, display] of Object.entries(options)) this.addOption(value, display);
		return this;
	}

	getValue(): string {
		return this.selectEl.value;
	}

	setValue(value: string): this {
		this.selectEl.value = value;
		return this;
	}

	onChange(callback: (value: string) => unknown): this {
		this.changeCallback__ = callback;
		return this;
	}
}

export class ButtonComponent extends BaseComponent {
	buttonEl = document.createElement("button");

	constructor(containerEl: HTMLElement) {
		super();
		containerEl.appendChild(this.buttonEl);
	}

	setButtonText(name: string): this {
		this.buttonEl.textContent = name;
		return this;
	}

	setCta(): this {
		this.buttonEl.classList.add("mod-cta");
		return this;
	}

	onClick(callback: (evt: MouseEvent) => unknown): this {
		this.buttonEl.addEventListener("click", (evt) => void callback(evt));
		return this;
	}
}

export class Setting {
	settingEl: HTMLElement;
	infoEl = div("setting-item-info");
	nameEl = div("setting-item-name");
	descEl = div("setting-item-description");
	controlEl = div("setting-item-control");
	components: BaseComponent[] = [];

	constructor(containerEl: HTMLElement) {
		this.settingEl = div("setting-item");
		this.infoEl.append(this.nameEl, this.descEl);
		this.settingEl.append(this.infoEl, this.controlEl);
		containerEl.appendChild(this.settingEl);
	}

	setName(name: string): this {
		this.nameEl.textContent = name;
		return this;
	}

	setDesc(desc: string): this {
		this.descEl.textContent = desc;
		return this;
	}

	setHeading(): this {
		this.settingEl.classList.add("setting-item-heading");
		return this;
	}

	private add__<C extends BaseComponent>(component: C, callback: (component: C) => unknown): this {
		this.components.push(component);
		callback(component);
		return this;
	}

	addButton(callback: (component: ButtonComponent) => unknown): this {
		return this.add__(new ButtonComponent(this.controlEl), callback);
	}

	addText(callback: (component: TextComponent) => unknown): this {
		return this.add__(new TextComponent(this.controlEl), callback);
	}

	addToggle(callback: (component: ToggleComponent) => unknown): this {
		return this.add__(new ToggleComponent(this.controlEl), callback);
	}

	addDropdown(callback: (component: DropdownComponent) => unknown): this {
		return this.add__(new DropdownComponent(this.controlEl), callback);
	}
}

/* ---------------------------------------------------------------- menus, notices, markdown, misc */

export class MenuItem {
	title__ = "";
	icon__ = "";
	callback__: ((evt: MouseEvent | KeyboardEvent) => unknown) | null = null;

	setTitle(title: string): this {
		this.title__ = title;
		return this;
	}

	setIcon(icon: string | null): this {
		this.icon__ = icon ?? "";
		return this;
	}

	onClick(callback: (evt: MouseEvent | KeyboardEvent) => unknown): this {
		this.callback__ = callback;
		return this;
	}
}

export class Menu extends Component {
	items__: MenuItem[] = [];

	addItem(callback: (item: MenuItem) => unknown): this {
		const item = new MenuItem();
		this.items__.push(item);
		callback(item);
		return this;
	}
}

export class Notice {
	static shown__: Notice[] = [];
	message__: string;
	duration__: number | undefined;
	hidden__ = false;
	messageEl = div("notice-message");

	constructor(message: string | DocumentFragment, duration?: number) {
		this.message__ = typeof message === "string" ? message : (message.textContent ?? "");
		this.duration__ = duration;
		this.messageEl.textContent = this.message__;
		Notice.shown__.push(this);
	}

	setMessage(message: string | DocumentFragment): this {
		this.message__ = typeof message === "string" ? message : (message.textContent ?? "");
		return this;
	}

	hide(): void {
		this.hidden__ = true;
	}
}

export abstract class MarkdownRenderer {
	static rendered__: { markdown: string; sourcePath: string }[] = [];

	static render(_app: unknown, markdown: string, el: HTMLElement, sourcePath: string, _component: Component): Promise<void> {
		MarkdownRenderer.rendered__.push({ markdown, sourcePath });
		const block = div("markdown-preview-view");
		block.textContent = markdown;
		el.appendChild(block);
		return Promise.resolve();
	}
}

export class Keymap {
	static isModEvent(evt?: MouseEvent | KeyboardEvent | null): boolean {
		return Boolean(evt && (evt.ctrlKey || evt.metaKey));
	}
}

export const Platform = {
	isDesktop: true,
	isMobile: false,
	isDesktopApp: true,
	isMobileApp: false,
	isIosApp: false,
	isAndroidApp: false,
	isPhone: false,
	isTablet: false,
	isMacOS: false,
	isWin: false,
	isLinux: true,
	isSafari: false,
};

/** No network in tests: the plugin's HTTP transport gets its own fake; this one always fails. */
export function requestUrl(): Promise<never> {
	return Promise.reject(new Error("net::ERR_CONNECTION_REFUSED (requestUrl is not available in tests)"));
}

export interface MockDebouncer<T extends unknown[]> {
	(...args: T): MockDebouncer<T>;
	cancel(): MockDebouncer<T>;
	run(): void;
}

export function debounce<T extends unknown[]>(callback: (...args: T) => unknown, timeout = 0, resetTimer = false): MockDebouncer<T> {
	let timer: ReturnType<typeof setTimeout> | null = null;
	let last: T | null = null;
	const fire = (): void => {
		timer = null;
		if (last) callback(...last);
	};
	const debounced = ((...args: T) => {
		last = args;
		if (timer !== null) {
			if (!resetTimer) return debounced;
			clearTimeout(timer);
		}
		timer = setTimeout(fire, timeout);
		return debounced;
	}) as MockDebouncer<T>;
	debounced.cancel = () => {
		if (timer !== null) clearTimeout(timer);
		timer = null;
		return debounced;
	};
	debounced.run = () => {
		if (timer === null) return;
		clearTimeout(timer);
		fire();
	};
	return debounced;
}

export function setIcon(parent: HTMLElement, iconId: string): void {
	parent.setAttribute("data-icon", iconId);
}

export function normalizePath(path: string): string {
	return path.replace(/\\/g, "/").replace(/\/+/g, "/").replace(/^\/|\/$/g, "");
}

/** Forget every notice and rendered markdown (call in beforeEach). */
export function resetMock__(): void {
	Notice.shown__ = [];
	MarkdownRenderer.rendered__ = [];
}
