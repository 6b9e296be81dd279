(function(){
"use strict";
var d=document,PS=50,page=0,q=d.getElementById("q"),info=d.getElementById("pinfo"),prev=d.getElementById("prev"),next=d.getElementById("next");
var roots=Array.prototype.slice.call(d.querySelectorAll("section.root")),shown=roots,timer=0;
function low(s){return (s||"").toLowerCase();}
function key(r){if(r._k===undefined){var h=r.querySelector("h2"),a=r.querySelector(".abs");r._k=low(h&&h.textContent)+"\n"+low(a&&a.textContent);}return r._k;}
function paint(){
var n=Math.max(1,Math.ceil(shown.length/PS));if(page>=n)page=n-1;if(page<0)page=0;
var on=new Set(shown.slice(page*PS,page*PS+PS));
for(var i=0;i<roots.length;i++)roots[i].hidden=!on.has(roots[i]);
on.forEach(function(r){r.querySelectorAll("thead th").forEach(function(th){th.tabIndex=0;});});
info.textContent=shown.length+" of "+roots.length+" roots \u00b7 page "+(page+1)+" of "+n;
prev.disabled=page===0;next.disabled=page>=n-1;}
function filter(){
var t=low(q.value.trim());shown=[];
roots.forEach(function(r){
var hit=!t||key(r).indexOf(t)>=0,any=hit;
r.querySelectorAll("table.files tbody tr").forEach(function(tr){var m=hit||low(tr.lastElementChild.textContent).indexOf(t)>=0;tr.hidden=!m;if(m)any=true;});
if(any)shown.push(r);});
page=0;paint();}
function val(c){var s=c.textContent.trim();if(s==="-"||s==="")return -1;if(/^-?[0-9.]+%?$/.test(s))return parseFloat(s);return low(s);}
function sort(e){
var th=e.target.closest&&e.target.closest("thead th");if(!th)return;
var row=th.parentNode,tb=th.closest("table").tBodies[0],i=Array.prototype.indexOf.call(row.children,th);
var asc=th.getAttribute("aria-sort")!=="ascending";
Array.prototype.forEach.call(row.children,function(c){c.removeAttribute("aria-sort");});
th.setAttribute("aria-sort",asc?"ascending":"descending");
var rs=Array.prototype.slice.call(tb.rows);
rs.sort(function(x,y){var a=val(x.cells[i]),b=val(y.cells[i]),r=(typeof a==="number"&&typeof b==="number")?a-b:String(a)<String(b)?-1:String(a)>String(b)?1:0;return asc?r:-r;});
rs.forEach(function(r){tb.appendChild(r);});}
d.addEventListener("click",sort);
d.addEventListener("keydown",function(e){if(e.key==="Enter"&&e.target.matches("thead th"))sort(e);});
q.addEventListener("input",function(){clearTimeout(timer);timer=setTimeout(filter,120);});
prev.addEventListener("click",function(){page--;paint();});
next.addEventListener("click",function(){page++;paint();});
d.getElementById("expand").addEventListener("click",function(){
var open=this.textContent.indexOf("Expand")===0;
roots.forEach(function(r){if(!r.hidden)r.querySelectorAll("details").forEach(function(x){x.open=open;});});
this.textContent=open?"Collapse sections":"Expand sections";});
function reveal(){
var id=location.hash.slice(1),el=id&&d.getElementById(id);
if(!el||!el.classList.contains("root"))return;
if(el.hidden){q.value="";roots.forEach(function(r){r.querySelectorAll("tr[hidden]").forEach(function(tr){tr.hidden=false;});});shown=roots;page=Math.floor(roots.indexOf(el)/PS);paint();}
el.scrollIntoView();}
window.addEventListener("hashchange",reveal);
function wfilter(el){
var box=el.closest(".agents");if(!box)return;
var k=box.querySelector(".wk").value,a=box.querySelector(".wa").value,n=0,rows=box.querySelectorAll("table.agentwarn tbody tr");
rows.forEach(function(tr){var m=(!k||tr.getAttribute("data-kind")===k)&&(!a||tr.getAttribute("data-agent")===a);tr.hidden=!m;if(m)n++;});
box.querySelector(".wn").textContent=n+" of "+rows.length+" warnings";}
d.addEventListener("change",function(e){if(e.target.matches&&e.target.matches(".wk,.wa"))wfilter(e.target);});
d.querySelectorAll(".wfilter").forEach(function(f){f.hidden=false;wfilter(f);});
d.getElementById("controls").hidden=false;paint();reveal();
})();
