-- links.lua - pandoc filter for make docs. A link to another page of the kit (a .md file) points to its
-- rendered page: README.md -> index.html, docs/NAME.md -> NAME.html, labs/NN-slug/README.md -> NN-slug.html.
function Link(el)
  local t = el.target
  if t:match('^%a+:') then return el end
  local path, anchor = t:match('^([^#]*)(#?.*)$')
  local lab = path:match('labs/([%w-]+)/README%.md$')
  if lab then
    el.target = lab .. '.html' .. anchor
  elseif path:match('README%.md$') then
    el.target = 'index.html' .. anchor
  elseif path:match('%.md$') then
    el.target = path:match('([%w-]+)%.md$') .. '.html' .. anchor
  end
  return el
end

-- For the PDF (XL_DOCS_PNG=1) a chart is taken as PNG: WeasyPrint cannot draw every SVG that gnuplot writes.
function Image(el)
  if os.getenv('XL_DOCS_PNG') == '1' then
    el.src = el.src:gsub('%.svg$', '.png')
  end
  return el
end
